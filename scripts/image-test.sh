#!/usr/bin/env bash
# Builds the real Dockerfile with buildah and runs the image as the Airbyte
# platform does: sh -c 'eval "$AIRBYTE_ENTRYPOINT spec"' as uid 1000 from
# /config, then check and read of the example manifest against the example API;
# the default image refuses custom components, naming the python image. Then
# the python target (--target python): the example connector with custom
# components (examples/components) read from the image's own manifest and
# components.py, trusted as in Airbyte's connector images.
# No registry is reachable: local stand-ins for the three base images are
# assembled first, under the Dockerfile's default names, so nothing is pulled
# (the Python one from the reference's tree, ../shared/refcdk7: Python 3.13
# and airbyte-cdk 7.28.2).
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
# Custom components: this image has no Python; it says which image runs them.
$B copy --chown 1000:1000 "$ctr" examples/components /config/components >/dev/null
refusal=$(run 'export AIRBYTE_ENABLE_UNSAFE_CODE=true; eval "$AIRBYTE_ENTRYPOINT check --manifest /config/components/manifest.yaml --components-path /config/components/components.py --config /config/config.json"' || true)
echo "$refusal" | grep -q "run the image $name:$tag-python, which has it" || fail "components in the default image: $refusal"
$B rm "$ctr" >/dev/null
echo "image test passed: $name:$tag, image $size, spec/check/read as uid 1000 from /config, $records records; custom components refused, naming $name:$tag-python"

# The python target, on a stand-in of Airbyte's source-declarative-manifest
# image made from the reference's tree (Python 3.13, airbyte-cdk 7.28.2).
python_image=$(sed -n 's/^ARG PYTHON_IMAGE=//p' Dockerfile)
refcdk7=${REFCDK7:-$HOME/.cache/refcdk7}
if ! $B inspect --type image "$python_image" >/dev/null 2>&1; then
  if [ ! -x "$refcdk7/root/usr/bin/python3" ]; then
    [ "${CI:-}" = "true" ] && fail "no reference tree at $refcdk7 (bash ../shared/refcdk7/build.sh) for the python image's stand-in"
    echo "python image test skipped: no reference tree at $refcdk7 (bash ../shared/refcdk7/build.sh)"
    exit 0
  fi
  # The tree without apt's caches and documentation (hard links: no copy).
  cp -al "$refcdk7/root" "$work/python" 2>/dev/null || cp -a "$refcdk7/root" "$work/python"
  rm -rf "$work/python/var/cache" "$work/python/var/lib/apt" "$work/python/usr/share/doc" "$work/python/usr/share/man" "$work/python/usr/share/locale"
  c=$($B from scratch)
  $B copy "$c" "$work/python/" / >/dev/null
  $B copy "$c" "$refcdk7/src/" /opt/airbyte-cdk/src >/dev/null
  $B copy "$c" "$refcdk7/vendor/" /opt/airbyte-cdk/vendor >/dev/null
  $B config --env PATH=/usr/local/bin:/usr/bin:/bin --env PYTHONPATH=/opt/airbyte-cdk/src:/opt/airbyte-cdk/vendor --cmd /bin/sh "$c"
  $B commit -q "$c" "$python_image" >/dev/null
  $B rm "$c" >/dev/null
fi
$B bud --pull=never -q --target python -t "$name:$tag-python" . >/dev/null
psize=$($B images --format '{{.Size}}' "$name:$tag-python")
plabels=$($B inspect --type image --format '{{index .OCIv1.Config.Labels "io.airbyte.name"}} {{index .OCIv1.Config.Labels "io.airbyte.version"}}' "$name:$tag-python")
[ "$plabels" = "$name $tag-python" ] || fail "python image labels '$plabels', want '$name $tag-python'"
ctr=$($B from --pull=never "$name:$tag-python")
$B copy --chown 1000:1000 "$ctr" examples/components/manifest.yaml examples/components/components.py /airbyte/integration_code/source_declarative_manifest/ >/dev/null
echo '{"streams":[{"stream":{"name":"users","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}' > "$work/users.json"
$B copy --chown 1000:1000 "$ctr" "$work/config.json" /config/config.json >/dev/null
$B copy --chown 1000:1000 "$ctr" "$work/users.json" /config/catalog.json >/dev/null
pspec=$(run 'eval "$AIRBYTE_ENTRYPOINT spec"')
echo "$pspec" | grep -q '"title":"API key"' || fail "python image spec of its own manifest printed: $pspec"
pread=$(run 'eval "$AIRBYTE_ENTRYPOINT read --config /config/config.json --catalog /config/catalog.json"')
precords=$(echo "$pread" | grep -c '"display_name":"user-[0-9]* <user[0-9]*@example.com>"' || true)
[ "$precords" = "25" ] || fail "python image read gave $precords records through the custom components, want 25: $(echo "$pread" | grep -v RECORD | head -5)"
$B rm "$ctr" >/dev/null
echo "image test passed: $name:$tag-python, image $psize, the image's own components.py run in Airbyte's CDK: $precords records"
