"""Shipped hardware tables of tcforge.numerics (approx_tables.npz: the H200 MUFU correction tables)."""
