#!/usr/bin/env python3
"""CPU seconds (user + system) used so far by the process tree under each PID given: the
process, its live descendants and the children they already reaped. PostgreSQL's postmaster
reaps its backends, so its tree counts every backend that ever ran. bench/cpu-per-request.sh
reads it before and after a run: the difference per request does not depend on how busy the
machine was, unlike a rate."""
import os
import sys

TICK = os.sysconf("SC_CLK_TCK")


def processes():
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        # ppid; utime, stime, cutime, cstime
        out[int(pid)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    return out


def tree_seconds(root, procs):
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            total += procs[pid][1]
        todo += [child for child, (parent, _) in procs.items() if parent == pid]
    return total / TICK


procs = processes()
print(" ".join(f"{tree_seconds(int(p), procs):.2f}" for p in sys.argv[1:]))
