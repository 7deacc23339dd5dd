"""Kernels for grading, in layers, each module one job and importing only those before it.

    cleanup       removing a folder a kernel wrote in, whatever it holds
    sandbox       the launcher a kernel starts under (python -m grader.kernels.sandbox): its uid, limits, namespaces
    mode          the sandbox's mode: full (root, namespaces) or basic
    folders       run folders: one per grader process, a stale one removed by the next grader
    uids          sandbox uids, leased one per kernel; what a dead grader left is swept
    channels      the grader's two channels to a kernel, shell and iopub, capped at 4 MiB a message
    zygote        a warm process that forks kernels (the one latency mechanism the benchmark keeps)
    provisioning  jupyter_client's provisioner hook: a kernel starts through grader.kernels.sandbox or the zygote
    kernel        one kernel (start, stop, its folders and uid) and start_kernel, the one retry site
    supply        kernels on demand for a worker, the next one booted early

Import the module you need (``from grader.kernels.supply import KernelSupply``): this file
imports nothing, so ``python -m grader.kernels.zygote`` loads only what the zygote needs.
"""
