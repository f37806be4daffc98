"""The card gateway client."""


class GatewayDeclined(Exception):
    pass


class GatewayThrottled(Exception):
    pass


class Gateway:
    def authorise(self, amount: int, currency: str):
        raise NotImplementedError

    def schedule_void(self, auth_id: str, after):
        raise NotImplementedError
