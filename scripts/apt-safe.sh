#!/usr/bin/env bash
# Debian packages without system services: `apt-get install` of openssh-server, munge or
# slurm-wlm on a host with an init system would start the *system* sshd on 0.0.0.0:22 and
# munged/slurmd/slurmctld, and enable them at boot. infersweep runs its own daemons
# (scripts/stack.sh), so every apt run here happens under a policy-rc.d that forbids starting
# anything (exit 101, honoured by invoke-rc.d and deb-systemd-invoke), boot-time enablement that
# packages add is undone, and afterwards nothing new may listen or run: checked, not assumed.
#
# Sourced by scripts/setup.sh and scripts/setup-sites.sh (apt_safe_install PKG...), or run:
#   scripts/apt-safe.sh install PKG...   install packages that way
#   scripts/apt-safe.sh run CMD...       run any command that way (what the tests use)
# Exit codes: the command's own on failure; 3 when a service was started anyway (it is stopped
# again and named on stderr) or boot-time enablement could not be undone. Enablement that is undone
# (every Debian postinst enables its unit, policy-rc.d or not) is reported and is not an error.

APT_SAFE_POLICY=${APT_SAFE_POLICY:-/usr/sbin/policy-rc.d}
APT_SAFE_DAEMONS='sshd|munged|slurmd|slurmctld|slurmdbd'

_apt_safe_ours() { # pid: a stack's own daemon, or a process under one within 3 generations (an SSH session
  # of a stack's sshd is `sshd: user@notty` under `sshd: user [priv]` under the stack's sshd); a daemon a package
  # started detaches to init and is not
  local p=$1 i
  for i in 0 1 2 3; do
    [ -r "/proc/$p/cmdline" ] || return 1
    tr '\0' '\n' < "/proc/$p/cmdline" 2>/dev/null | grep -q '/stack/' && return 0
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -q '^SLURM_CONF=.*/stack/' && return 0
    [ "$i" = 3 ] && return 1
    p=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
    [ -n "$p" ] && [ "$p" -gt 1 ] || return 1
  done
  return 1
}
_apt_safe_daemons() { # pids of system daemons a package could have started (an infersweep stack's own are not)
  local p
  for p in $(pgrep -x "$APT_SAFE_DAEMONS" 2>/dev/null); do
    _apt_safe_ours "$p" && continue
    echo "$p"
  done | sort
}
_apt_safe_listeners() { # "addr:port process" of TCP listeners (any address) owned by those daemons
  local d; d=$(_apt_safe_daemons | paste -sd'|' -)
  [ -n "$d" ] || return 0
  ss -ltnpH 2>/dev/null | awk '{print $4, $6}' | grep -E "pid=($d)," | sort || true
}
_apt_safe_units() { # boot-time enablement: symlinks in systemd's *.wants folders and rc?.d start links
  { find /etc/systemd/system -path '*.wants/*' -type l 2>/dev/null
    find /etc/rc2.d /etc/rc3.d /etc/rc4.d /etc/rc5.d -name 'S*' 2>/dev/null; } | LC_ALL=C sort
}
_apt_safe_new() { # lines of $2 that are not in $1 (both in any order)
  LC_ALL=C comm -13 <(printf '%s\n' "$1" | LC_ALL=C sort) <(printf '%s\n' "$2" | LC_ALL=C sort) | sed '/^$/d'
}

# Run "$@" with starting services forbidden; restore the previous policy-rc.d (or none) after.
apt_safe_run() {
  local saved="" rc=0 before_l before_d before_u after_l after_d after_u new_l new_d new_u bad=0
  before_l=$(_apt_safe_listeners); before_d=$(_apt_safe_daemons); before_u=$(_apt_safe_units)
  if [ -e "$APT_SAFE_POLICY" ]; then saved=$(mktemp) && cp -p "$APT_SAFE_POLICY" "$saved"; fi
  mkdir -p "$(dirname "$APT_SAFE_POLICY")"
  printf '#!/bin/sh\n# infersweep scripts/apt-safe.sh: no service may start during this apt run\nexit 101\n' > "$APT_SAFE_POLICY"
  chmod 755 "$APT_SAFE_POLICY"
  "$@" || rc=$?
  if [ -n "$saved" ]; then cp -p "$saved" "$APT_SAFE_POLICY" && rm -f "$saved"; else rm -f "$APT_SAFE_POLICY"; fi
  after_l=$(_apt_safe_listeners); after_d=$(_apt_safe_daemons); after_u=$(_apt_safe_units)
  new_u=$(_apt_safe_new "$before_u" "$after_u")
  if [ -n "$new_u" ]; then
    # every Debian postinst enables its unit (deb-systemd-helper / update-rc.d ignore policy-rc.d):
    # expected on a fresh machine, undone here and checked below, not an error
    echo "[apt-safe] the packages enabled system services at boot; disabling them again:" >&2
    printf '  %s\n' $new_u >&2
    # shellcheck disable=SC2086
    rm -f $new_u
    local left; left=$(_apt_safe_new "$before_u" "$(_apt_safe_units)")
    if [ -n "$left" ]; then echo "[apt-safe] could not disable: $left" >&2; bad=1; fi
  fi
  new_d=$(_apt_safe_new "$before_d" "$after_d")
  new_l=$(_apt_safe_new "$before_l" "$after_l")
  if [ -n "$new_d$new_l" ]; then
    echo "[apt-safe] a system service was started despite policy-rc.d; stopping it:" >&2
    [ -z "$new_l" ] || printf '  listening: %s\n' "$new_l" >&2
    local p
    for p in $new_d $(printf '%s\n' "$new_l" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | sort -u); do
      echo "  pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)" >&2
      kill -TERM "$p" 2>/dev/null || true
    done
    bad=1
  fi
  [ "$rc" -ne 0 ] && return "$rc"
  [ "$bad" -eq 0 ] || return 3
}

# apt-get install the packages that are missing (quiet, no recommends, no services).
apt_safe_install() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  [ "$(id -u)" = 0 ] || { echo "[apt-safe] Debian packages ${missing[*]} are missing and installing them needs root" >&2; return 1; }
  echo "[apt-safe $(date +%T)] apt-get install ${missing[*]} (no service is started or enabled)" >&2
  apt_safe_run apt-get update -qq || { echo "[apt-safe] apt-get update could not reach Debian's mirrors" >&2; return 1; }
  DEBIAN_FRONTEND=noninteractive apt_safe_run apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    install) shift; apt_safe_install "$@" ;;
    run) shift; apt_safe_run "$@" ;;
    *) echo "usage: $0 install PKG... | run CMD..." >&2; exit 2 ;;
  esac
fi
