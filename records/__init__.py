"""The offline record format, beside the core as python-chess's ``pgn.py`` is: everything an
archivist or referee needs to check a finished game without the server.

- ``hashing``: the one definition of the event hash chain, the seed commitments and the stored
  form of tokens, which the server writes with and the verifier checks with;
- ``record``: a finished game as one ``GameRecord`` message (build, load, dump);
- ``signing``: the server's Ed25519 signature over a record's header and chain;
- ``verify``: replay a record with the engine and check every move, score, deal and hash;
- ``notation``: a record as text that people read and write.

Nothing here does I/O beyond what its caller hands it, and nothing imports the server.
"""
