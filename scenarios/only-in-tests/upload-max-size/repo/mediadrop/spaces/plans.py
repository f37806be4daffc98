"""Per-plan ceilings for space upload policies."""

PLAN_UPLOAD_CEILING = {
    "free": 10_240,
    "team": 262_144,
    "enterprise": 1_048_576,
}

PLAN_LINK_EXPIRY_DAYS = {"free": 7, "team": 30, "enterprise": 365}
