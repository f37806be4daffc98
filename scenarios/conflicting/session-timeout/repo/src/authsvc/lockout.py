class Lockout:
    """Counts failed sign-ins per username; locks after the configured threshold."""

    # Lock duration for ACCOUNT_LOCKED, in seconds.
    LOCK_SECONDS = 15 * 60

    def __init__(self, redis, threshold: int):
        self._redis = redis
        self._threshold = threshold

    def is_locked(self, username: str) -> bool:
        return self._redis.exists(f"lock:{username.lower()}") == 1

    def record_failure(self, username: str) -> None:
        key = f"fail:{username.lower()}"
        count = self._redis.incr(key)
        self._redis.expire(key, self.LOCK_SECONDS)
        if count >= self._threshold:
            self._redis.set(f"lock:{username.lower()}", 1, ex=self.LOCK_SECONDS)

    def reset(self, username: str) -> None:
        self._redis.delete(f"fail:{username.lower()}")
