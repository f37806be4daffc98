from datetime import datetime, timezone

from fastapi import APIRouter, Depends, HTTPException
from gatekeep import Client as Gatekeep, GatekeepUnavailable
from pydantic import BaseModel, Field

from mediadrop.deps import gatekeep_client, space_repo
from mediadrop.spaces.plans import PLAN_LINK_EXPIRY_DAYS, PLAN_UPLOAD_CEILING

router = APIRouter()


class UploadPolicyIn(BaseModel):
    max_upload_size: int = Field(gt=0)
    allowed_types: list[str] = ["image/*", "video/*"]
    link_expiry_days: int = Field(default=7, gt=0)


class UploadPolicyOut(BaseModel):
    policy_version: int
    updated_at: datetime


@router.put("/spaces/{space_id}/upload-policy", response_model=UploadPolicyOut)
def set_upload_policy(space_id: str, body: UploadPolicyIn,
                      spaces=Depends(space_repo), gk: Gatekeep = Depends(gatekeep_client)):
    space = spaces.get(space_id)
    if space is None:
        raise HTTPException(404, detail={"code": "SPACE_NOT_FOUND"})
    if body.max_upload_size > PLAN_UPLOAD_CEILING[space.plan]:
        raise HTTPException(422, detail={"code": "LIMIT_TOO_LARGE"})
    if body.link_expiry_days > PLAN_LINK_EXPIRY_DAYS[space.plan]:
        raise HTTPException(422, detail={"code": "LIMIT_TOO_LARGE"})
    try:
        gk.put_bucket_rules(
            bucket=space.bucket,
            object_limit=body.max_upload_size,
            content_types=body.allowed_types,
            signed_url_days=body.link_expiry_days,
        )
    except GatekeepUnavailable:
        raise HTTPException(503, detail={"code": "GATEWAY_UNAVAILABLE"})
    version = spaces.bump_policy_version(space_id)
    return UploadPolicyOut(policy_version=version, updated_at=datetime.now(timezone.utc))
