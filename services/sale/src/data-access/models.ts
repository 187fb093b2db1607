import type { Connection, Model } from 'mongoose';
import { saleModel, type SaleDocument } from './sales';

export type SaleModels = { sales: Model<SaleDocument> };

export function createModels(connection: Connection): SaleModels {
  return { sales: saleModel(connection) };
}
