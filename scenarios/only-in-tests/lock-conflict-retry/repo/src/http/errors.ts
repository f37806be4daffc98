export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message?: string,
  ) {
    super(message ?? code);
  }
}

export function toBody(e: ApiError) {
  return { code: e.code, message: e.message };
}
