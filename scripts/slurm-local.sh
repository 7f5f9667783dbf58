#!/usr/bin/env bash
# Starts, stops or reports a private single-node Slurm cluster whose every
# file (munge key and socket, slurm.conf, state, spool, pid files and logs)
# lives in STATE_DIR. It needs root and Debian's slurm-wlm and munge packages
# (scripts/install-deps.sh), but no systemd: the daemons are started directly.
# The sweep tests use it to run `spyre sweep --backend slurm` end to end.
#
# Usage: scripts/slurm-local.sh start|stop|status STATE_DIR
#   start   creates a munge key, starts munged, writes STATE_DIR/slurm.conf,
#           starts slurmctld and slurmd and waits (30 s at most) until the node
#           is idle; then prints the `export SLURM_CONF=...` line that points
#           the Slurm commands (sbatch, squeue, sinfo) at this cluster.
#   stop    stops the daemons through their pid files.
#   status  prints whether each daemon runs and what sinfo says; exit 0 only
#           when all three run.
# Every failure says why and exits non-zero. The daemons take the first two
# free TCP ports from Slurm's defaults 6817 (slurmctld) and 6818 (slurmd)
# upwards, so several such clusters (say, two test runs) can run at once.
set -euo pipefail

# The daemons live in sbin, which a non-login root shell may not search.
PATH=$PATH:/usr/sbin:/sbin

readonly kStartTimeout=30
readonly kFirstPort=6817
readonly kLastPort=6915
readonly kPortLock=/tmp/spyre-slurm-local.lock

die() {
  echo "slurm-local: $*" >&2
  exit 1
}

usage() {
  echo "usage: scripts/slurm-local.sh start|stop|status STATE_DIR" >&2
  exit 2
}

[ "$#" -eq 2 ] || usage
command_name=$1
case "$command_name" in
  start | stop | status) ;;
  *) usage ;;
esac
[ -n "$2" ] || usage

if [ "$command_name" = start ]; then
  [ "$(id -u)" -eq 0 ] || die "start needs root (the daemons run as root without systemd)"
  mkdir -p "$2" || die "cannot create state directory '$2'"
fi
[ -d "$2" ] || die "state directory '$2' does not exist"
state_dir=$(cd "$2" && pwd)
# slurm.conf splits values at blanks and AuthInfo at commas: only plain paths
# go into it.
if [[ ! "$state_dir" =~ ^[A-Za-z0-9_./+@-]+$ ]]; then
  die "state directory '$state_dir' must be a plain path (letters, digits and ._+@-/ only), which slurm.conf can hold"
fi

munge_dir=$state_dir/munge
munge_socket=$munge_dir/munge.socket
munge_pid=$munge_dir/munged.pid
slurm_conf=$state_dir/slurm.conf
ctld_pid=$state_dir/run/slurmctld.pid
slurmd_pid=$state_dir/run/slurmd.pid
log_dir=$state_dir/log
start_ok=0

# The pid in FILE when that process is alive, else nothing.
live_pid() {
  local file=$1 pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# Stops the daemons of the pid files given as NAME=FILE pairs: SIGTERM to
# all of them at once (each takes a second or two to shut down), up to 10 s
# for them to exit, then SIGKILL for any left.
stop_daemons() {
  local pair name file pid i alive
  local -a names=() pids=()
  for pair in "$@"; do
    name=${pair%%=*}
    file=${pair#*=}
    if pid=$(live_pid "$file"); then
      kill "$pid" 2>/dev/null || true
      names+=("$name")
      pids+=("$pid")
    fi
    rm -f "$file"
  done
  for ((i = 0; i < 100; i++)); do
    alive=0
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then
        alive=1
      fi
    done
    [ "$alive" -eq 1 ] || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if kill -0 "${pids[$i]}" 2>/dev/null; then
      echo "slurm-local: ${names[$i]} (pid ${pids[$i]}) did not stop on SIGTERM; killing it" >&2
      kill -9 "${pids[$i]}" 2>/dev/null || true
    fi
    echo "slurm-local: stopped ${names[$i]} (pid ${pids[$i]})"
  done
}

do_stop() {
  stop_daemons "slurmd=$slurmd_pid" "slurmctld=$ctld_pid"
  # Last: the Slurm daemons authenticate through munged until they exit.
  stop_daemons "munged=$munge_pid"
}

do_status() {
  local ok=0 name file pid
  for name in munged slurmctld slurmd; do
    case $name in
      munged) file=$munge_pid ;;
      slurmctld) file=$ctld_pid ;;
      slurmd) file=$slurmd_pid ;;
    esac
    if pid=$(live_pid "$file"); then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"
      ok=1
    fi
  done
  if [ "$ok" -eq 0 ]; then
    SLURM_CONF=$slurm_conf sinfo -h -o '%P %a %D %T %N' 2>&1 || ok=1
  fi
  return "$ok"
}

# Prints the last lines of a daemon log after a failure, so the reason is
# visible without opening STATE_DIR.
show_log() {
  local file=$1
  [ -f "$file" ] || return 0
  echo "slurm-local: last lines of $file:" >&2
  tail -n 15 "$file" >&2
}

# Whether something listens on TCP port PORT of this host.
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Sets ctld_port and slurmd_port to the first pair of free ports from
# kFirstPort on.
choose_ports() {
  local port
  for ((port = kFirstPort; port < kLastPort; port += 2)); do
    if ! port_in_use "$port" && ! port_in_use "$((port + 1))"; then
      ctld_port=$port
      slurmd_port=$((port + 1))
      return 0
    fi
  done
  die "no two free TCP ports between $kFirstPort and $kLastPort for slurmctld and slurmd"
}

start_munged() {
  local owner=root run_as=()
  # munged refuses a key not owned by the user it runs as; the Debian
  # packages run it as the 'munge' user, so do the same when it exists.
  if id munge >/dev/null 2>&1; then
    owner=munge
    run_as=(runuser -u munge --)
  fi
  mkdir -p "$munge_dir"
  # munged requires execute permission for all on every directory above its
  # socket, and no group or other write permission where it keeps its key.
  chmod 0755 "$state_dir" "$munge_dir"
  if [ ! -f "$munge_dir/munge.key" ]; then
    dd if=/dev/urandom of="$munge_dir/munge.key" bs=1024 count=1 status=none ||
      die "cannot create the munge key"
  fi
  chown -R "$owner:$owner" "$munge_dir" 2>/dev/null ||
    chown -R "$owner" "$munge_dir" || die "cannot give $munge_dir to user $owner"
  chmod 0400 "$munge_dir/munge.key"
  if [ "$owner" = munge ] && ! runuser -u munge -- test -r "$munge_dir/munge.key"; then
    die "the munge user cannot reach $munge_dir: every folder above $state_dir needs execute permission for all (chmod a+x)"
  fi
  rm -f "$munge_socket" "$munge_socket.lock"
  if ! "${run_as[@]}" munged --key-file="$munge_dir/munge.key" \
    --socket="$munge_socket" --pid-file="$munge_pid" \
    --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" 9>&-; then
    show_log "$munge_dir/munged.log"
    die "munged did not start"
  fi
  if ! munge -n -S "$munge_socket" | unmunge -S "$munge_socket" >/dev/null 2>&1; then
    show_log "$munge_dir/munged.log"
    die "munged started but a credential does not round-trip through $munge_socket"
  fi
}

write_slurm_conf() {
  local host cpus memory
  host=$(hostname -s) || die "hostname -s failed"
  cpus=$(nproc) || die "nproc failed"
  memory=$(free -m | awk '/^Mem:/ { print $2 }')
  [[ "$memory" =~ ^[0-9]+$ ]] || die "cannot read the memory size from free"
  # Addresses are given as 127.0.0.1 so nothing depends on the host name
  # resolving; linuxproc process tracking and task/none need no cgroups.
  cat >"$slurm_conf" <<EOF
# Written by scripts/slurm-local.sh: a private single-node cluster.
ClusterName=spyre-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
StateSaveLocation=$state_dir/state
SlurmdSpoolDir=$state_dir/spool
SlurmctldPidFile=$ctld_pid
SlurmdPidFile=$slurmd_pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
# Schedule at once on submit and on job end instead of batching every few
# seconds: a sweep of small points is dominated by that wait otherwise.
SchedulerParameters=batch_sched_delay=0
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

wait_for_idle_node() {
  local i states
  for ((i = 0; i < kStartTimeout * 5; i++)); do
    states=$(SLURM_CONF=$slurm_conf sinfo -h -N -o '%T' 2>/dev/null || true)
    if [ "$states" = idle ]; then
      return 0
    fi
    sleep 0.2
  done
  echo "slurm-local: sinfo says: ${states:-nothing}" >&2
  show_log "$log_dir/slurmctld.log"
  show_log "$log_dir/slurmd.log"
  return 1
}

do_start() {
  local tool
  for tool in munged munge unmunge slurmctld slurmd sinfo flock; do
    command -v "$tool" >/dev/null 2>&1 ||
      die "$tool not found; install Debian's slurm-wlm and munge (scripts/install-deps.sh)"
  done
  if live_pid "$ctld_pid" >/dev/null || live_pid "$slurmd_pid" >/dev/null ||
    live_pid "$munge_pid" >/dev/null; then
    die "a cluster of $state_dir already runs; run 'scripts/slurm-local.sh stop $state_dir' first"
  fi
  # Two starts at once would pick the same free ports: the choice and the
  # start up to the listening daemons run under one machine-wide lock (fd 9,
  # which the daemons must not inherit, or they would hold it).
  exec 9>"$kPortLock" || die "cannot open the lock file $kPortLock"
  flock -w 60 9 || die "another slurm-local.sh start held $kPortLock for 60 s"
  choose_ports

  # From here on any failure stops whatever already started.
  trap 'if [ "$start_ok" -eq 0 ]; then do_stop >/dev/null 2>&1 || true; fi' EXIT
  start_munged
  mkdir -p "$state_dir/state" "$state_dir/spool" "$state_dir/run" "$log_dir"
  write_slurm_conf
  # -c: a fresh cluster, never jobs recovered from an earlier run's state.
  if ! slurmctld -c -f "$slurm_conf" -L "$log_dir/slurmctld.log" 9>&-; then
    show_log "$log_dir/slurmctld.log"
    die "slurmctld did not start"
  fi
  if ! slurmd -f "$slurm_conf" -L "$log_dir/slurmd.log" 9>&-; then
    show_log "$log_dir/slurmd.log"
    die "slurmd did not start"
  fi
  if ! wait_for_idle_node; then
    die "the node did not become idle within $kStartTimeout s"
  fi
  start_ok=1
  exec 9>&-
  echo "slurm-local: cluster of $state_dir is up"
  printf 'export SLURM_CONF=%q\n' "$slurm_conf"
}

case "$command_name" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
esac
