"""Tables: read a user's file (or DataFrame) into one validated tidy table, or refuse it.

:mod:`~audit.tables.common` reads files of any supported type and holds the
messages shared by every reader; :mod:`~audit.tables.rates` reads per-group
error-rate tables (wide or long); :mod:`~audit.tables.scores` reads
comparison-score tables, and :mod:`~audit.tables.groupings` regroups one read
with several attributes by some of them.  Every refusal names the source, the line and the
column.
"""
