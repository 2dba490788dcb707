"""How long a flush to disk takes here: the floor of an acknowledged change with
[data] sync = "disk". Appends 4 KiB and fsyncs, 200 times, in DIR (default: the
current directory, where osprey-data would be). Usage: python3 bench/fsync.py [DIR]"""
import os
import sys
import time

d = sys.argv[1] if len(sys.argv) > 1 else "."
path = os.path.join(d, ".osprey-fsync-test")
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
times = []
try:
    for _ in range(200):
        os.write(fd, b"x" * 4096)
        t = time.perf_counter()
        os.fsync(fd)
        times.append(time.perf_counter() - t)
finally:
    os.close(fd)
    os.remove(path)
times.sort()
print(f"fsync of a 4 KiB append in {d}: p50 {times[100] * 1e6:.0f} us, p90 {times[180] * 1e6:.0f} us")
