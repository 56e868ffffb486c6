"""What a table keeps: the journal (:mod:`.journal`), the live table folded from it (:mod:`.table`) and the id a
game is known by on the feed and in the records (:mod:`.ids`).

Below both the runtime (:mod:`tablesvc.service`) and the wire (:mod:`tablesvc.mqtt`), above the pure core only:
the service writes a journal, the payloads carry its entries, and the consumers (the archive, replays, the
tournament's export) read it back without loading the broker client or the drivers.
"""
