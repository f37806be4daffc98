import { OrderStatus } from "./lifecycle";

export interface OrderRecord {
  id: string;
  customerId: string;
  orderStatus: OrderStatus;
  totalMinor: number;
  currency: string;
  placedAt: string;
  paymentId?: string;
}

export interface OrderRepository {
  get(id: string): Promise<OrderRecord | undefined>;
  update(id: string, patch: Partial<OrderRecord>): Promise<void>;
}
