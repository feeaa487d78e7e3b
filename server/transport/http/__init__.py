"""The HTTP listener: Hypercorn on the event loop (``listener``), the door that answers every
malformed request with a status (``door``), the Connect and gRPC-Web applications over the very
servicers the gRPC port serves (``connect``), and the built web app (``webapp/``)."""
