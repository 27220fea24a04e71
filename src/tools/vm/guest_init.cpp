// tools/vm/guest_init.cpp — guest-side scripts of `numaware vm`.
#include "tools/vm/guest_init.hpp"

namespace numaware::vm {

std::string shell_quote(const std::string& word) {
    std::string out = "'";
    for (char c : word) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string guest_init_script(const std::vector<std::string>& modules) {
    std::string module_list;
    for (const auto& m : modules) module_list += (module_list.empty() ? "" : " ") + m;

    // Every failure powers the guest off at once, and the host reports
    // init-error plus the console tail, so a broken guest never hangs.
    std::string s = R"SH(#!/bin/busybox sh
# numaware vm guest init (generated; see src/tools/vm/guest_init.cpp)
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
die() {
    echo "numaware-init: $*"
    [ -d /out/. ] && echo "$*" > /out/init-error
    sync
    poweroff -f
}
)SH";
    s += "for m in " + module_list + "; do\n";
    s += R"SH(    insmod /lib/modules/$m.ko || die "insmod $m failed"
done
p9=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $p9 nwout /out || die "cannot mount the results export (nwout)"
mount -t 9p -o $p9,ro,cache=loose host /host || die "cannot mount the host root (host)"
mount -t proc proc /host/proc || die "cannot mount /proc in the host root"
mount -t sysfs sysfs /host/sys || die "cannot mount /sys in the host root"
mount -t devtmpfs devtmpfs /host/dev || die "cannot mount /dev in the host root"
mount -t tmpfs -o mode=1777 tmpfs /host/tmp || die "cannot mount a tmpfs on /tmp"
mkdir -p /host/dev/shm && mount -t tmpfs -o mode=1777 tmpfs /host/dev/shm
[ -d /host/run ] && mount -t tmpfs -o mode=755 tmpfs /host/run
# Writable host directories at their host paths (created if they sit under
# the guest's fresh /tmp).
if [ -f /out/shares ]; then
    while read -r tag path; do
        mkdir -p "/host$path" 2>/dev/null
        mount -t 9p -o $p9 "$tag" "/host$path" || die "cannot mount share $path"
    done < /out/shares
fi
mkdir -p /host/tmp/numaware-vm
cp /out/command.sh /out/machine.json /host/tmp/numaware-vm/ || die "cannot copy the command into the guest"
read up rest < /proc/uptime; echo "$up" > /out/started
/bin/env -i /bin/chroot /host /bin/sh /tmp/numaware-vm/command.sh </dev/null >/out/stdout 2>/out/stderr
status=$?
read up rest < /proc/uptime; echo "$up" > /out/finished
echo "$status" > /out/status
sync
umount /out 2>/dev/null
poweroff -f
)SH";
    return s;
}

std::string command_script(const GuestCommand& command) {
    std::string s = "# numaware vm command (generated)\n";
    for (const auto& [name, value] : command.env) s += "export " + name + "=" + shell_quote(value) + "\n";
    s += "cd " + shell_quote(command.cwd) + " || { echo \"numaware vm: working directory \"" +
         shell_quote(command.cwd) +
         "\" is not visible in the guest (the guest has its own /tmp; use --share)\" >&2; exit " +
         std::to_string(cwd_failure_status) + "; }\n";
    s += "exec";
    for (const auto& word : command.argv) s += " " + shell_quote(word);
    s += "\n";
    return s;
}

}  // namespace numaware::vm
