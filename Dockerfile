# The generic image runs a manifest injected in the config; a manifest copied
# to /airbyte/integration_code/source_declarative_manifest/manifest.yaml in a
# derived image makes a dedicated connector (see README).
# Two targets: the default (last) image has no Python and refuses custom
# components, naming the other; --target python adds Python and Airbyte's
# CDK (its source-declarative-manifest image, whose tag is the CDK's
# version), in which custom Python components run (README, Custom components).
ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG RUNTIME_IMAGE=docker.io/library/busybox:1.36-musl
ARG PYTHON_IMAGE=docker.io/airbyte/source-declarative-manifest:7.28.2

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X github.com/airbyte-go/source-declarative/components.PythonImage=airbyte/source-declarative-go:${VERSION}-python" -o /out/source-declarative .

FROM ${PYTHON_IMAGE} AS python
USER root
RUN (grep -q '^airbyte:' /etc/passwd || echo 'airbyte:x:1000:1000:airbyte:/airbyte:/bin/sh' >> /etc/passwd) \
 && (grep -q '^airbyte:' /etc/group || echo 'airbyte:x:1000:' >> /etc/group) \
 && mkdir -p /airbyte/bin /airbyte/integration_code/source_declarative_manifest /config /secrets \
 && chown 1000:1000 /airbyte /airbyte/bin /airbyte/integration_code /airbyte/integration_code/source_declarative_manifest /config /secrets \
 && python3 -c 'import airbyte_cdk, importlib.metadata as m; assert m.version("airbyte-cdk").startswith("7."), m.version("airbyte-cdk")'
COPY --from=build /out/source-declarative /airbyte/bin/source-declarative
ENV AIRBYTE_ENTRYPOINT="/airbyte/bin/source-declarative"
ENTRYPOINT ["/airbyte/bin/source-declarative"]
LABEL io.airbyte.name=airbyte/source-declarative-go io.airbyte.version=0.1.0-python
WORKDIR /airbyte
USER airbyte

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
