import type { Response } from "express";

// List endpoints wrap their rows in an envelope: `data` holds the page of results and
// `next_cursor` the cursor for the following page (absent on the last page).
export interface Page<T> {
  data: T[];
  next_cursor?: string;
}

export function sendPage<T>(res: Response, rows: T[], nextCursor?: string): void {
  const page: Page<T> = { data: rows };
  if (nextCursor) page.next_cursor = nextCursor;
  res.json(page);
}

export function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ code, message });
}
