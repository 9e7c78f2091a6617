# The generic image runs a manifest injected in the config; a manifest copied
# to /airbyte/integration_code/source_declarative_manifest/manifest.yaml in a
# derived image makes a dedicated connector (see README).
ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG RUNTIME_IMAGE=docker.io/library/busybox:1.36-musl

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/source-declarative .

FROM ${RUNTIME_IMAGE}
RUN echo 'airbyte:x:1000:1000:airbyte:/airbyte:/bin/sh' >> /etc/passwd \
 && echo 'airbyte:x:1000:' >> /etc/group \
 && mkdir -p /airbyte/bin /airbyte/integration_code/source_declarative_manifest /config /secrets \
 && chown -R 1000:1000 /airbyte /config /secrets
COPY --from=build /out/source-declarative /airbyte/bin/source-declarative
ENV AIRBYTE_ENTRYPOINT="/airbyte/bin/source-declarative"
ENTRYPOINT ["/airbyte/bin/source-declarative"]
LABEL io.airbyte.name=airbyte/source-declarative-go io.airbyte.version=0.1.0
WORKDIR /airbyte
USER airbyte
