#!/usr/bin/env bash
# Builds the real Dockerfile with buildah and runs the image as the Airbyte
# platform does: sh -c 'eval "$AIRBYTE_ENTRYPOINT spec"' as uid 1000 from
# /config, then check and read of the example manifest against the example API.
# No registry is reachable: local stand-ins for the two base images are
# assembled first, under the Dockerfile's default names, so nothing is pulled.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v buildah >/dev/null 2>&1; then
  echo "image test skipped: buildah is not installed (apt-get install buildah busybox-static)"
  exit 0
fi
BUSYBOX=$(command -v busybox || true)
if [ -z "$BUSYBOX" ] || ! file "$BUSYBOX" 2>/dev/null | grep -q static; then
  BUSYBOX=/bin/busybox
fi
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
B="buildah --storage-driver vfs"
if ! probe=$($B from scratch 2>&1); then
  echo "image test skipped: buildah cannot create containers here: $probe"
  exit 0
fi
$B rm "$probe" >/dev/null
work=$(mktemp -d)
api_pid=""
cleanup() { [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

go_image=$(sed -n 's/^ARG GO_IMAGE=//p' Dockerfile)
runtime_image=$(sed -n 's/^ARG RUNTIME_IMAGE=//p' Dockerfile)
name=$(sed -n 's/^  dockerRepository: //p' metadata.yaml)
tag=$(sed -n 's/^  dockerImageTag: //p' metadata.yaml)

# busybox stand-in: a static busybox and its applets.
rootfs() {
  local dir=$1
  mkdir -p "$dir/bin" "$dir/etc" "$dir/tmp" "$dir/usr/bin" "$dir/sbin"
  cp "$BUSYBOX" "$dir/bin/busybox"
  for applet in $("$dir/bin/busybox" --list); do
    [ -e "$dir/bin/$applet" ] || ln -s busybox "$dir/bin/$applet"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' > "$dir/etc/passwd"
  echo 'root:x:0:' > "$dir/etc/group"
  chmod 1777 "$dir/tmp"
}
if ! $B inspect --type image "$runtime_image" >/dev/null 2>&1; then
  rootfs "$work/busybox"
  c=$($B from scratch)
  $B copy "$c" "$work/busybox/" /
  $B config --cmd /bin/sh "$c"
  $B commit -q "$c" "$runtime_image" >/dev/null
  $B rm "$c" >/dev/null
fi
# Go toolchain stand-in: this machine's Go, busybox for RUN, and the module
# cache with GOPROXY=off so that the build is offline.
if ! $B inspect --type image "$go_image" >/dev/null 2>&1; then
  rootfs "$work/go"
  mkdir -p "$work/go/usr/local" "$work/go/go/pkg"
  cp -a "$(go env GOROOT)" "$work/go/usr/local/go"
  go mod download
  cp -a "$(go env GOMODCACHE)" "$work/go/go/pkg/mod"
  c=$($B from scratch)
  $B copy "$c" "$work/go/" /
  $B config --env PATH=/usr/local/go/bin:/bin --env GOPATH=/go --env GOPROXY=off --env GOFLAGS=-mod=mod --env GOTOOLCHAIN=local "$c"
  $B commit -q "$c" "$go_image" >/dev/null
  $B rm "$c" >/dev/null
fi

$B bud --pull=never -q -t "$name:$tag" . >/dev/null
size=$($B images --format '{{.Size}}' "$name:$tag")
entrypoint=$($B inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$name:$tag")
env_ep=$($B inspect --type image --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$name:$tag" | sed -n 's/^AIRBYTE_ENTRYPOINT=//p')
labels=$($B inspect --type image --format '{{index .OCIv1.Config.Labels "io.airbyte.name"}} {{index .OCIv1.Config.Labels "io.airbyte.version"}}' "$name:$tag")
user=$($B inspect --type image --format '{{.OCIv1.Config.User}}' "$name:$tag")
fail() { echo "image test FAILED: $*"; exit 1; }
[ "$entrypoint" = "[$env_ep]" ] || fail "AIRBYTE_ENTRYPOINT '$env_ep' is not the ENTRYPOINT $entrypoint"
[ "$labels" = "$name $tag" ] || fail "labels '$labels' differ from metadata.yaml '$name $tag'"
[ "$user" = "airbyte" ] || fail "user is '$user'"

# Run as the platform: sh -c 'eval "$AIRBYTE_ENTRYPOINT ..."' as 1000 from /config.
ctr=$($B from --pull=never "$name:$tag")
run() { $B run --isolation chroot --user 1000:1000 --workingdir /config --network host "$ctr" -- sh -c "$1"; }
spec=$(run 'eval "$AIRBYTE_ENTRYPOINT spec"')
echo "$spec" | grep -q '"type":"SPEC"' || fail "spec printed: $spec"
[ "$(run 'id -u; ls -ld /airbyte | cut -c1-10; stat -c %u /airbyte')" = "$(printf '1000\ndrwxr-xr-x\n1000')" ] || fail "uid or /airbyte ownership"

go build -o "$work/api" ./examples/api
port=$((20000 + RANDOM % 20000))
"$work/api" -addr "127.0.0.1:$port" >/dev/null 2>&1 &
api_pid=$!
sleep 1
$B copy --chown 1000:1000 "$ctr" examples/manifest.yaml /config/manifest.yaml >/dev/null
$B copy --chown 1000:1000 "$ctr" examples/catalog.json /config/catalog.json >/dev/null
echo "{\"base_url\":\"http://127.0.0.1:$port\",\"api_key\":\"demo-key\"}" > "$work/config.json"
$B copy --chown 1000:1000 "$ctr" "$work/config.json" /config/config.json >/dev/null
check=$(run 'eval "$AIRBYTE_ENTRYPOINT check --manifest /config/manifest.yaml --config /config/config.json"')
echo "$check" | grep -q '"status":"SUCCEEDED"' || fail "check printed: $check"
read_out=$(run 'eval "$AIRBYTE_ENTRYPOINT read --manifest /config/manifest.yaml --config /config/config.json --catalog /config/catalog.json"')
records=$(echo "$read_out" | grep -c '"type":"RECORD"' || true)
[ "$records" = "125" ] || fail "read gave $records records, want 125 (25 in each of the five example streams)"
$B rm "$ctr" >/dev/null
echo "image test passed: $name:$tag, image $size, spec/check/read as uid 1000 from /config, $records records"
