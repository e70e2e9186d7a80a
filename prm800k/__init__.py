"""PRM800K without Django: the record schema, parsing, record building, label helpers, TRL rows,
grading and agreement. The app (import, submit, export, statistics), `ml.prm` and the offline
simulation all use these, so they read and grade labels the same way.

Modules: schema (fields, validation), parse (import lines), records (export, encodings), labels
(main line, counters), trl, grading, agreement.
"""
