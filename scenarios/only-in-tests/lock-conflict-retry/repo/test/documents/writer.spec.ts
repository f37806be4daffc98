import { beforeEach, describe, expect, it } from "vitest";
import { DocumentWriter } from "../../src/documents/writer.js";
import { ApiError } from "../../src/http/errors.js";
import { FakeLocks, testDb } from "../support.js";

describe("DocumentWriter", () => {
  let locks: FakeLocks;
  let writer: DocumentWriter;

  beforeEach(async () => {
    locks = new FakeLocks({ leaseMs: 5_000 });
    writer = new DocumentWriter(await testDb({ doc1: { revision: 4 } }), locks);
  });

  it("writes when the base revision is current", async () => {
    const res = await writer.write("doc1", { content: "hi", base_revision: 4, author_id: "u1" });
    expect(res.revision).toBe(5);
  });

  it("LOCK_CONFLICT is transient: the identical request succeeds once the other writer's lease is gone", async () => {
    const other = await locks.tryAcquire("doc:doc1");
    const req = { content: "hi", base_revision: 4, author_id: "u1" };
    await expect(writer.write("doc1", req)).rejects.toMatchObject({ status: 409, code: "LOCK_CONFLICT" });

    locks.clock.advance(5_001); // the other writer crashed and never released
    await expect(writer.write("doc1", req)).resolves.toMatchObject({ revision: 5 });
    expect(other).toBeTruthy();
  });

  it("a client retry loop with backoff gets through a busy document", async () => {
    await locks.tryAcquire("doc:doc1");
    const req = { content: "hi", base_revision: 4, author_id: "u1" };
    let result;
    for (const waitMs of [1_000, 2_000, 4_000]) {
      try {
        result = await writer.write("doc1", req);
        break;
      } catch (e) {
        expect((e as ApiError).code).toBe("LOCK_CONFLICT");
        locks.clock.advance(waitMs);
      }
    }
    expect(result?.revision).toBe(5);
  });

  it("REVISION_MISMATCH does not go away on retry", async () => {
    const req = { content: "hi", base_revision: 3, author_id: "u1" };
    await expect(writer.write("doc1", req)).rejects.toMatchObject({ code: "REVISION_MISMATCH" });
    await expect(writer.write("doc1", req)).rejects.toMatchObject({ code: "REVISION_MISMATCH" });
  });
});
