import { isCancellable, transition, TransitionError } from "./lifecycle";

describe("order lifecycle", () => {
  it("starts at pending_payment and becomes paid on capture", () => {
    expect(transition("pending_payment", "payment_captured")).toBe("paid");
  });

  it("cancels when the payment fails", () => {
    expect(transition("pending_payment", "payment_failed")).toBe("cancelled");
  });

  it("ships then delivers", () => {
    expect(transition(transition("paid", "label_printed"), "carrier_delivered")).toBe("delivered");
  });

  it("cannot cancel once shipped", () => {
    expect(isCancellable("shipped")).toBe(false);
    expect(() => transition("shipped", "cancel")).toThrow(TransitionError);
  });
});
