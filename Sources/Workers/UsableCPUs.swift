import CThreadName
import NIOCore

/// How many CPUs the process may use, to size its threads: the event loops and the workers.
///
/// NIO's `System.coreCount` reads the cgroup's CPU quota and cpuset, but not the process's
/// affinity mask, so a gateway pinned with `taskset` (or by a runtime that sets only the
/// affinity) to 2 of 16 cores would run 16 event loops on 2 CPUs: threads that take turns on
/// the same cores, each switch paid for. The count is the smaller of the two; at least 1.
public enum UsableCPUs {
    public static var count: Int {
        let affinity = Int(cthreadname_affinity_cpu_count())
        let available = System.coreCount
        return max(1, affinity > 0 ? min(affinity, available) : available)
    }
}
