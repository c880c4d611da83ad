"""The scheduler: reorder a traced NKI program within its dependencies, as the compiler does
(docs/NKI.md, "Scheduling").

Each engine runs its instructions in order, so the program order decides what can overlap. This
pass builds the dependency graph of the traced operations — conservatively: two operations that
touch the same SBUF/PSUM buffer (after allocation: pool and buffer index) or overlapping elements
of one HBM tensor, at least one of them writing, keep their order; a tile's allocation stays in
its pool's order and before the tile's first use — and list-schedules it: among the ready
operations whose original position lies within a window ahead of the oldest unscheduled one,
the one with the longest remaining path (estimated cost) goes first, ties in program order.
Any order it produces is a topological order of that graph, so results are unchanged; it is
deterministic and linear in the operations for a fixed window.
"""
import heapq

WINDOW = 256


def _cost(op):
    """A rough cost in engine cycles, for priorities only (the model does the timing)."""
    name, operands = op[2], op[4]
    views = [o for o in operands if hasattr(o, "axes")]
    if not views:
        return 64
    if name == "matmul":
        return max(64, views[2].shape[-1] if len(views) > 2 else 64)
    free = 1
    for n, _ in views[0].axes[1:]:
        free *= n
    if name.startswith("dma"):
        return 2000 + free * views[0].dtype.itemsize // 8
    return max(64, free)


def _span(v):
    lo = hi = v.offset
    for n, st in (v.axes if not v.is_tile else v.axes[1:]):
        d = (n - 1) * st
        lo, hi = (lo + d, hi) if d < 0 else (lo, hi + d)
    return lo, hi


HBM_BUCKETS = 256


def _accesses(op):
    """(resource, is_write) for each memory region the operation touches. The destination is
    its first pattern operand; activation and exponential also write their row-sum operand
    (their last operand when it is a pattern), match_replace8 its dst_idx (its second operand).
    A tile is its buffer (pool, slot); an HBM pattern is the buckets of its tensor (HBM_BUCKETS
    per tensor) its elements span."""
    name, operands = op[2], op[4]
    views = [o for o in operands if hasattr(o, "axes")]
    res = []
    for k, v in enumerate(views):
        write = k == 0 or (name in ("activation", "exponential") and operands[-1] is v) or \
            (name == "match_replace8" and operands[1] is v)  # its dst_idx
        if v.is_tile:
            res.append((("b", v.base.pool["id"], v.base.slot), write))
            continue
        base = getattr(v.base, "_base", v.base)
        total = 1
        for d in base.shape:
            total *= d
        size = -(-total // HBM_BUCKETS)
        lo, hi = _span(v)
        for b in range(max(0, lo) // size, min(total - 1, hi) // size + 1):
            res.append((("h", id(base), b), write))
    return res


def schedule(ctx, pools):
    """Reorder ctx.ops in place (after allocate)."""
    for p in pools:
        for k, t in enumerate(p["tiles"]):
            t.slot = k % p["depth"]
    ops = [op for op in ctx.ops if op[0] != "nop"]
    n = len(ops)
    if n < 3:
        ctx.ops = ops
        return
    succ = [[] for _ in range(n)]
    npred = [0] * n
    cost = [0] * n

    def edge(a, b):
        if a != b:
            succ[a].append(b)
            npred[b] += 1

    last_w = {}     # resource -> last writer index
    readers = {}    # resource -> readers since the last write
    tile_stmt = {}  # Tile -> index of its allocation
    pool_last = {}  # pool id -> last allocation index
    for i, op in enumerate(ops):
        kind = op[0]
        if kind == "tile":
            t = op[1]
            tile_stmt[t] = i
            pid = t.pool["id"]
            if pid in pool_last:
                edge(pool_last[pid], i)
            pool_last[pid] = i
            # the allocation hands the buffer over: every earlier use of that buffer (by the
            # tile `depth` allocations back) stays before it, or that use would see the new
            # tile's buffer (the C side's "stale tile")
            key = ("b", pid, t.slot)
            if key in last_w:
                edge(last_w[key], i)
            for r in readers.get(key, ()):
                edge(r, i)
            continue
        if kind == "fail":
            for j in range(i):
                edge(j, i)
            continue
        cost[i] = _cost(op)
        for o in op[4]:
            if hasattr(o, "axes") and o.is_tile and o.base in tile_stmt:
                edge(tile_stmt[o.base], i)
        for key, write in _accesses(op):
            if key in last_w:
                edge(last_w[key], i)
            if write:
                for r in readers.get(key, ()):
                    edge(r, i)
                readers[key] = []
                last_w[key] = i
            else:
                readers.setdefault(key, []).append(i)
    # longest remaining path (with costs), in reverse program order (edges point forward)
    prio = [0] * n
    for i in range(n - 1, -1, -1):
        best = 0
        for j in succ[i]:
            if prio[j] > best:
                best = prio[j]
        prio[i] = best + cost[i]
    ready = []      # heap of (-prio, index) within the window
    waiting = []    # ready but beyond the window: by index
    done = [False] * n
    oldest = 0
    order = []
    for i in range(n):
        if npred[i] == 0:
            heapq.heappush(waiting, i)

    def admit():
        while waiting and waiting[0] < oldest + WINDOW:
            j = heapq.heappop(waiting)
            heapq.heappush(ready, (-prio[j], j))

    admit()
    while len(order) < n:
        if not ready:
            j = heapq.heappop(waiting)
            heapq.heappush(ready, (-prio[j], j))
        _, i = heapq.heappop(ready)
        done[i] = True
        order.append(i)
        for j in succ[i]:
            npred[j] -= 1
            if npred[j] == 0:
                heapq.heappush(waiting, j)
        while oldest < n and done[oldest]:
            oldest += 1
        admit()
    ctx.ops = [ops[i] for i in order]
