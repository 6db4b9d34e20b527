"""GT: Dennis, *Gauge-theoretic transformers* -- KL attention under SO(N) parallel transport.

One module per object (beliefs and KL, transport and frames, free energy, gradients,
natural gradients and retraction, the Dirac limit); ``claims`` lists the GT claims.
"""
