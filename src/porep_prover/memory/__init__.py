# SPDX-License-Identifier: Apache-2.0
"""Memory: what proving a parameter set holds on the host and on each
device, and the plan that bounds both. Arithmetic on sizes only (no
device, no allocation), below every package that holds memory: the engine
makes the plans as a set loads, from the budgets in its settings, and hands
each device's plan down to the regions that run by it.

    sizes        the units and sizes every figure is counted in: GiB, a scalar, a point, ALIGN, MARGIN
    budgets      the host budget (its memory or cgroup limit, less a margin) and a device's (0: the card's)
    workload     a set and its circuit as memory sees them: SrsShape (its arrays' lengths), Workload
    costs        the device's cost model in bytes and seconds: twiddles, MSM passes, buckets, the bus
    device_plan  one device's plan: resident, streamed, pass size, matrices (plan, DevicePlan, DeviceModel)
    host_plan    the host plan beside the devices': the set, the partitions in flight (make_plan, MemoryPlan)
    choice       the ways a set can be proved, weighed: plan_set, what the engine and `porep-prover plan` call
    layout       what a device plan asks of the device's memory during one region (Layout)

Elsewhere: engine.planning keeps the plans of an engine's loaded sets and
engine.memory admits partitions by them; cuda.device_memory lays a device's
memory out by a region's Layout; msm.gpu.plan is the MSM's own plan (window
widths, fill parts), not memory's; host_memory reads files into memory.
The modules are imported by name (porep_prover.memory.device_plan, ...):
the package itself loads none of them, so that a light caller (the
command line's parser) takes only the sizes.
"""
