#!/bin/sh
# fetch_guest_kernel_check.sh — scripts/fetch-guest-kernel leaves the host's
# apt as it found it (issue 17): run with a fresh cache whose kernels are
# the ones already fetched (so nothing large is downloaded), it must write
# its package lists under the cache, and not change one file of /etc/apt or
# of the host's package lists. It must also add the decompressed PVH image
# (vmlinux) to an entry that lacks one: each kernel is copied into the fresh
# cache without its vmlinux, which must come back as an ELF with a PVH entry
# note, byte for byte the one the bootstrap's run extracted.
#
# usage: fetch_guest_kernel_check.sh SOURCE_DIR
set -u
fail() {
    echo "fetch_guest_kernel_check: FAIL: $*" >&2
    exit 1
}
src=$1
script=$src/scripts/fetch-guest-kernel
cache=${NUMAWARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numaware}
[ -d "$cache/kernels" ] || fail "no cached kernels in $cache/kernels (scripts/bootstrap fetches them)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cache/kernels"
for dir in "$cache"/kernels/*/; do
    rel=$(basename "$dir")
    [ -s "$dir/vmlinux" ] || fail "$dir has no vmlinux (scripts/bootstrap runs fetch-guest-kernel, which extracts it)"
    mkdir "$work/cache/kernels/$rel"
    cp "$dir/vmlinuz" "$dir/source" "$work/cache/kernels/$rel/"
    ln -s "$dir/lib" "$work/cache/kernels/$rel/lib"
done
snapshot() {
    find /etc/apt /var/lib/apt/lists -type f 2>/dev/null | LC_ALL=C sort | while read -r f; do
        printf '%s %s\n' "$(md5sum < "$f" | cut -d' ' -f1)" "$f"
    done
}
snapshot > "$work/before"
NUMAWARE_CACHE=$work/cache "$script" all > "$work/out" 2>&1 || { cat "$work/out"; fail "fetch-guest-kernel failed"; }
cat "$work/out"
snapshot > "$work/after"
if ! diff "$work/before" "$work/after" > "$work/diff"; then
    cat "$work/diff"
    fail "fetch-guest-kernel changed the host's apt files above"
fi
ls "$work/cache/apt/lists" | grep -q Packages || fail "no package lists under the private cache ($work/cache/apt/lists)"
grep -q "already cached" "$work/out" || fail "the cached kernels were not found"
for dir in "$cache"/kernels/*/; do
    rel=$(basename "$dir")
    new=$work/cache/kernels/$rel/vmlinux
    [ -s "$new" ] || fail "no vmlinux extracted for $rel"
    readelf -n "$new" | grep -q 'Xen.*(0x00000012)' || fail "$new has no PVH entry note (Xen note 0x12)"
    cmp -s "$new" "$dir/vmlinux" || fail "$new differs from $dir/vmlinux"
done
echo "fetch_guest_kernel_check: /etc/apt and the host's package lists unchanged ($(wc -l < "$work/before") files); private lists: $(ls "$work/cache/apt/lists" | grep -c Packages)"
