# shellcheck shell=bash
# Process and port helpers shared by scripts/stack.sh and scripts/stack-production.sh (sourced, not
# run). They expect STATE (the stack's state folder) and `log`; SLURM_CONF where Slurm is involved.
alive() { # pidfile -> live, non-zombie process
  [ -s "$1" ] || return 1
  local pid; pid=$(cat "$1")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/stat" ] && [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
}
# pidfile name -> the pid is alive AND is this stack's daemon: its name (comm, 15 chars) is `name`
# and its command line or environment names this stack's state folder. A stale pidfile whose pid
# was reused by an unrelated process is never taken for the daemon, and never signalled.
ours() {
  alive "$1" || return 1
  local pid comm; pid=$(cat "$1")
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [ "$comm" = "${2:0:15}" ] || return 1
  { tr '\0' '\n' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$STATE" && return 0
  { tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null | grep -qxF -- "SLURM_CONF=${SLURM_CONF:-}"
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_for() { # seconds, command...: until the command succeeds, at most that many seconds of wall time
  local end=$(( SECONDS + $1 )); shift
  until "$@"; do (( SECONDS < end )) || return 1; sleep 0.1; done
}
stop_pid() { # pidfile name [seconds, default 10]: signal only a process that is this stack's `name` (see ours)
  if ! ours "$1" "$2"; then
    alive "$1" && log "$1 names pid $(cat "$1"), which is not this stack's $2: not signalled"
    rm -f "$1"; return 0
  fi
  local pid; pid=$(cat "$1")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $(( ${3:-10} * 10 ))); do ours "$1" "$2" || break; sleep 0.1; done
  ours "$1" "$2" && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$1"
}
