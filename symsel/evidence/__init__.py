"""Evidence: what the bounds are checked against.

Exact selection laws on finite and continuous pairs at any precision (:mod:`.exact`,
:mod:`.continuous`), the registry of the papers' worst-case examples (:mod:`.examples`), certified
lower bounds from explicit worst-case orders (:mod:`.lower`), Monte Carlo audits (:mod:`.audit`) and
``verify``, which sets a bound beside its exact or lower-bound evidence (:mod:`.verify`).
Every module here takes a :data:`symsel.pairs.Pair`; none is imported by :mod:`symsel.bounds`.
"""
