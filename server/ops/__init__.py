"""What an operator runs and reads: graceful drain, Prometheus metrics, structured logs and the
observer that counts and logs every call, the PostgreSQL listener that carries other processes'
changes, and ``boneyard-server admin``."""
