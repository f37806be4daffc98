from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from . import tokens
from .clients import lookup_client

router = APIRouter()


class IssueTokenRequest(BaseModel):
    client_id: str
    client_secret: str
    audience: str
    scopes: list[str] = Field(default_factory=list)
    token_ttl: int | None = None


class IssueTokenResponse(BaseModel):
    access_token: str
    token_type: str
    expires_at: str


@router.post("/tokens", response_model=IssueTokenResponse)
def issue_token(req: IssueTokenRequest) -> IssueTokenResponse:
    client = lookup_client(req.client_id, req.client_secret)
    if client is None:
        raise HTTPException(401, {"code": "INVALID_CLIENT", "message": "unknown client or bad secret"})
    if not set(req.scopes) <= client.allowed_scopes:
        raise HTTPException(403, {"code": "SCOPE_NOT_ALLOWED", "message": "scope not granted to client"})
    try:
        out = tokens.issue(req.client_id, req.audience, req.scopes, req.token_ttl, client.signing_key)
    except tokens.TokenError as e:
        raise HTTPException(422, {"code": e.code, "message": str(e)})
    return IssueTokenResponse(**out)
