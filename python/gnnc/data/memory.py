"""How much memory the process may still use: runtime/lib/Memory.cpp's rule,
so that both validators refuse an array too large for the machine with the
same message instead of a MemoryError (or the kernel's out-of-memory kill)."""

import os
import resource
from typing import Optional, Tuple


def _kib_field(path: str, key: str) -> Optional[int]:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    parts = line[len(key) + 1:].split()
                    return int(parts[0]) * 1024 if parts and parts[0].isdigit() else None
    except OSError:
        pass
    return None


def _first_line(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return None


def _cgroup_limits():
    """(limit - usage) along this process's cgroups and their ancestors."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2]
        v2 = controllers == ""
        if not v2 and "memory" not in controllers.split(","):
            continue
        root = "/sys/fs/cgroup" if v2 else "/sys/fs/cgroup/memory"
        limit_file = "memory.max" if v2 else "memory.limit_in_bytes"
        usage_file = "memory.current" if v2 else "memory.usage_in_bytes"
        while True:
            d = root + ("" if path == "/" else path)
            limit, usage = _first_line(f"{d}/{limit_file}"), _first_line(f"{d}/{usage_file}")
            if limit and usage and limit.isdigit() and usage.isdigit() and int(limit) < 1 << 60:
                yield int(limit) - int(usage), "the cgroup's memory limit"
            if path in ("", "/"):
                break
            path = path[:path.rfind("/")] or "/"


def available_memory() -> Tuple[Optional[int], str]:
    """(bytes, which limit) or (None, "") when no limit could be read."""
    candidates = []
    avail = _kib_field("/proc/meminfo", "MemAvailable")
    if avail is not None:
        candidates.append((avail, "MemAvailable"))
    candidates.extend(_cgroup_limits())
    for res, field, source in ((resource.RLIMIT_AS, "VmSize", "ulimit -v"),
                               (resource.RLIMIT_DATA, "VmData", "ulimit -d")):
        soft, _ = resource.getrlimit(res)
        if soft != resource.RLIM_INFINITY:
            used = _kib_field("/proc/self/status", field) or 0
            candidates.append((soft - used, source))
    best = None
    for n, source in candidates:
        n = max(n, 0)
        if best is None or n < best[0]:
            best = (n, source)
    return best if best else (None, "")


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    x, unit = float(n), -1
    units = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    while x >= 1024.0 and unit < 5:
        x /= 1024.0
        unit += 1
    return f"{x:.1f} {units[unit]}"


def memory_error(what: str, nbytes: int) -> Optional[str]:
    """None when `nbytes` more fit, else the one-line reason."""
    avail, source = available_memory()
    if avail is None or nbytes <= avail:
        return None
    return (f"{what} needs {format_bytes(nbytes)} of memory but {format_bytes(avail)} is "
            f"available ({source})")
