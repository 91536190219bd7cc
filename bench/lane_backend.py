"""Splits the busiest PostgreSQL backend's time from `perf script -F comm,tid,time,event,trace`
of sched_switch and sched_wakeup events: on the CPU, runnable but waiting for a CPU, and
asleep by what woke it (the network's soft interrupt shows as `swapper`, a thread of `serve`
as `onceorder`) and how it slept (S: waiting for a message or a lock, D: waiting for the
disk). Also prints the next busiest backends' time on the CPU. bench/lane-backend.sh.
Usage: perf script ... | python3 lane_backend.py"""
import collections
import re
import sys

line_re = re.compile(r"\s*(\S.*?)\s+(\d+)\s+([\d.]+): sched:(\w+): (.*)")
field = lambda name, text: re.search(name + r"=(\S+)", text).group(1)

events = []
for line in sys.stdin:
    m = line_re.match(line)
    if m:
        comm, _, t, event, rest = m.groups()
        events.append((float(t), comm, event, rest))
if not events:
    sys.exit("no events")
events.sort(key=lambda e: e[0])

# Time on the CPU of every postgres process, to find the lane's backend.
cpu, since = collections.Counter(), {}
for t, comm, event, rest in events:
    if event != "sched_switch":
        continue
    prev, nxt = int(field("prev_pid", rest)), int(field("next_pid", rest))
    if prev in since:
        cpu[prev] += t - since.pop(prev)
    if field("next_comm", rest) == "postgres":
        since[nxt] = t
ranked = cpu.most_common(4)
pid = ranked[0][0]

first = last = None
on_cpu = 0.0
running_since = asleep_since = queued_since = None
slept_how = None
waits = collections.defaultdict(lambda: [0, 0.0])  # (woken by, state) -> [times, seconds]
runnable = 0.0
for t, comm, event, rest in events:
    first = t if first is None else first
    last = t
    if event == "sched_switch":
        if int(field("prev_pid", rest)) == pid:
            if running_since is not None:
                on_cpu += t - running_since
            running_since = None
            state = field("prev_state", rest)
            if state.startswith("R"):
                queued_since = t
            else:
                asleep_since, slept_how = t, state
        if int(field("next_pid", rest)) == pid:
            running_since = t
            if queued_since is not None:
                runnable += t - queued_since
                queued_since = None
    elif event == "sched_wakeup" and int(re.search(r" pid=(\d+)", rest).group(1)) == pid:
        if asleep_since is not None:
            w = waits[(comm, slept_how)]
            w[0] += 1
            w[1] += t - asleep_since
            asleep_since = None
            queued_since = t

window = (last or 0) - (first or 0)
print(f"backend {pid}: {window:.2f} s traced, on the CPU {100 * on_cpu / window:.0f} %, "
      f"runnable waiting for a CPU {100 * runnable / window:.1f} %")
rest_of = 0.0
for (woken_by, state), (n, seconds) in sorted(waits.items(), key=lambda kv: -kv[1][1]):
    if seconds / window >= 0.005:
        print(f"  asleep ({state}) until woken by {woken_by}: {100 * seconds / window:.1f} %, "
              f"{n} times, {1e6 * seconds / n:.0f} us each")
    else:
        rest_of += seconds
print(f"  other waits {100 * rest_of / window:.1f} %")
others = ", ".join(f"{100 * s / window:.0f} %" for _, s in ranked[1:])
print(f"next busiest backends on the CPU: {others or 'none'}")
