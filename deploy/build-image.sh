#!/usr/bin/env bash
# Builds Herald's image from scratch with buildah: no daemon, no registry, and the vfs storage
# driver (plain directories, so it needs no overlay support from the kernel). The image holds
# a static herald binary at /herald, the build host's CA bundle and /etc/passwd and /etc/group
# naming the user herald (uid and gid 10001); deploy/Dockerfile builds the same user,
# entrypoint, command, ports and labels on Debian slim.
#
#   deploy/build-image.sh [-t NAME] [-r DIR] [VERSION]
#
#   -t NAME    the image's name (default herald:dev)
#   -r DIR     buildah's storage root, DIR/run its run root (default: buildah's own)
#   VERSION    the version herald reports (default: git describe --tags --always)
#
# It prints the image's id. Needs go, git and buildah (Debian: apt-get install buildah), as root.
set -euo pipefail

usage() { sed -n '8,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

name=herald:dev
root=""
while getopts "t:r:h" opt; do
	case "$opt" in
	t) name="$OPTARG" ;;
	r) root="$OPTARG" ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || usage
if [ -n "$root" ]; then
	root="$(realpath -m "$root")" # before the cd below
fi
cd "$(dirname "$0")/.."
version="${1:-$(git describe --tags --always)}"
bundle=/etc/ssl/certs/ca-certificates.crt
[ -s "$bundle" ] || { echo "no CA bundle at $bundle (Debian: apt-get install ca-certificates)" >&2; exit 1; }
hash="$(git rev-parse HEAD)"

storage=(--storage-driver vfs)
if [ -n "$root" ]; then
	storage+=(--root "$root" --runroot "$root/run")
fi

work="$(mktemp -d)"
ctr=""
cleanup() {
	if [ -n "$ctr" ]; then buildah "${storage[@]}" rm "$ctr" >/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# The same build as deploy/Dockerfile's: static, no paths of this machine, stamped.
CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X main.version=${version} -X main.gitHash=${hash}" \
	-o "$work/rootfs/herald" ./cmd/herald

mkdir -p "$work/rootfs/etc/ssl/certs"
mkdir -m 1777 "$work/rootfs/tmp"
cp "$bundle" "$work/rootfs/etc/ssl/certs/"
printf '%s\n' 'root:x:0:0:root:/root:/usr/sbin/nologin' \
	'herald:x:10001:10001::/nonexistent:/usr/sbin/nologin' >"$work/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'herald:x:10001:' >"$work/rootfs/etc/group"

ctr="$(buildah "${storage[@]}" from scratch)"
buildah "${storage[@]}" copy --chown 0:0 "$ctr" "$work/rootfs" / >/dev/null
# A numeric user, so that Kubernetes can check runAsNonRoot without looking the name up.
# 8080: the API (and its /metrics); /metrics, /healthz and /readyz: 9090 a worker, 9091 a scheduler.
buildah "${storage[@]}" config \
	--user 10001:10001 \
	--entrypoint '["/herald"]' --cmd '["api"]' \
	--port 8080 --port 9090 --port 9091 \
	--label org.opencontainers.image.title=herald \
	--label org.opencontainers.image.source=https://github.com/heraldhq/herald \
	--label org.opencontainers.image.licenses=Apache-2.0 \
	--label "org.opencontainers.image.version=${version}" \
	--label "org.opencontainers.image.revision=${hash}" \
	"$ctr"
buildah "${storage[@]}" commit --quiet --rm "$ctr" "$name"
ctr=""
