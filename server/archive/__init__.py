"""Finished games: the archive (``archive``: listing, records built from the store's rows),
its servicer (``service``: ``ArchiveService``), and the server's key that signs records
(``signing``; the signature itself is ``boneyard.records.signing``'s).
"""
