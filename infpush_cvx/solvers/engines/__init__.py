"""The shared engines below the models: deadlines, duality, the working set, the structured
interior point, dual first-order methods, pair sums, kernels and the CVXPY backend."""
