#!/usr/bin/env bash
# A single-node Slurm cluster on this machine (slurmctld + slurmd, munge authentication), for the
# Slurm test of CI (tests/scale/slurm_e2e.py). Idempotent: does nothing when a cluster already
# answers. Debian 12, as root. Not for production clusters: no accounting, no cgroups.
set -euo pipefail

if timeout 10 sinfo -h -o %a 2>/dev/null | grep -q up; then
  echo "start-local-slurm: a cluster is already up"
  exit 0
fi
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in slurm-wlm munge; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "start-local-slurm: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# munge: a key, its run folder, the daemon.
if [[ ! -s /etc/munge/munge.key ]]; then
  as_root mungekey -c 2>/dev/null || as_root dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
as_root chown munge:munge /etc/munge/munge.key
as_root chmod 400 /etc/munge/munge.key
as_root mkdir -p /run/munge
as_root chown munge:munge /run/munge
pgrep -x munged >/dev/null || as_root runuser -u munge -- /usr/sbin/munged

# slurm.conf for this one node; an existing configuration not written here is left alone.
host=$(hostname -s 2>/dev/null || hostname)
cpus=$(nproc)
memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10))
conf=/etc/slurm/slurm.conf
if [[ ! -f $conf ]] || grep -q "written by cuset start-local-slurm.sh" "$conf"; then
  as_root mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  as_root tee "$conf" >/dev/null <<CONF
# written by cuset start-local-slurm.sh: a single-node cluster for tests
ClusterName=cuset-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
fi
pgrep -x slurmctld >/dev/null || as_root /usr/sbin/slurmctld
pgrep -x slurmd >/dev/null || as_root /usr/sbin/slurmd

for _ in $(seq 1 30); do
  if timeout 5 sinfo -h -o %a 2>/dev/null | grep -q up && timeout 5 sinfo -h -o %T 2>/dev/null | grep -qE "idle|mix|alloc"; then
    echo "start-local-slurm: node $host up ($cpus CPUs)"
    exit 0
  fi
  sleep 1
done
echo "start-local-slurm: the cluster did not come up; see /var/log/slurm/" >&2
exit 1
