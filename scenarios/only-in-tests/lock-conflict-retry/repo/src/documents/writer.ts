import { LockClient } from "@docstore/locks";
import { ApiError } from "../http/errors.js";
import type { Db } from "../db.js";
import { assertNotOnHold } from "./legalHold.js";

const MAX_CONTENT_BYTES = 2 * 1024 * 1024;

export interface WriteRequest {
  content: string;
  base_revision: number;
  author_id: string;
}

export interface WriteResult {
  revision: number;
  updated_at: string;
}

export class DocumentWriter {
  constructor(
    private readonly db: Db,
    private readonly locks: LockClient,
  ) {}

  async write(documentId: string, req: WriteRequest): Promise<WriteResult> {
    if (Buffer.byteLength(req.content) > MAX_CONTENT_BYTES) {
      throw new ApiError(413, "PAYLOAD_TOO_LARGE");
    }
    await assertNotOnHold(this.db, documentId);
    const lock = await this.locks.tryAcquire(`doc:${documentId}`);
    if (!lock) {
      throw new ApiError(409, "LOCK_CONFLICT", "another write to this document is in progress");
    }
    try {
      const current = await this.db.one("select revision from documents where id = $1", [documentId]);
      if (current.revision !== req.base_revision) {
        throw new ApiError(409, "REVISION_MISMATCH", `document is at revision ${current.revision}`);
      }
      const next = current.revision + 1;
      const row = await this.db.one(
        "update documents set content = $2, revision = $3, updated_by = $4, updated_at = now() where id = $1 returning updated_at",
        [documentId, req.content, next, req.author_id],
      );
      return { revision: next, updated_at: row.updated_at.toISOString() };
    } finally {
      await lock.release();
    }
  }
}
