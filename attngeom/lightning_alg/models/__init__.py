"""Lightning self-attention beyond one head without skip or mask (ADM §6, HMK §5).

``variant`` (the options --heads, --skip, --causal), ``multihead`` (H heads, outputs
summed), ``skip`` (f(X) + X, f(X) + W_s X), ``causal`` (column j attends to columns 1..j),
``network`` (a network of such layers as a map of its weights: shapes, evaluation over
F_p / floats / SymPy, symmetries), ``by_tokens`` (the same networks token by token from the
definitions, in exact integers: the claims' reference), ``mixing`` (the GL_H mixing of the
heads), ``dimension`` (measured ranks, expected formulas), ``report`` (docs/beyond.md's
sweeps).
"""
