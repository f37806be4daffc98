from io import BytesIO

from PIL import Image

# Originals larger than this are not thumbnailed at all (bytes).
max_file_size = 25 * 1024 * 1024
THUMB_EDGE = 320


def thumbnail(original: bytes) -> bytes | None:
    if len(original) > max_file_size:
        return None
    img = Image.open(BytesIO(original))
    img.thumbnail((THUMB_EDGE, THUMB_EDGE))
    out = BytesIO()
    img.save(out, format="WEBP", quality=80)
    return out.getvalue()
