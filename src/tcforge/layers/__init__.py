"""Neural-rendering layers rebuilt as code: descriptors, weight images, CPU references and native kernels."""
