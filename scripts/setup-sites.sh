#!/usr/bin/env bash
# Set-up for the site tests: a tcsh login user on the loopback sshd proves that every
# remote command runs under /bin/sh whatever the login shell (libs/slurm/src/ssh.ts). The user
# itself is created by scripts/stack.sh up. Idempotent; called by scripts/setup.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/apt-safe.sh"
apt_safe_install tcsh
