"""The doors: how calls come in and answers go out. ``grpc`` is the gRPC port (its piping,
keepalive, reflection); ``http`` the HTTP listener (Connect, gRPC-Web and gRPC over HTTP/2, the
web app), behind its door. ``refusals`` is the one form of a refused call (status code, message,
``ErrorInfo``) both doors send.
"""
