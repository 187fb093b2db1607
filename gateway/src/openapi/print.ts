import { gatewayOpenApiDocument } from './document';

// `npm run openapi`: the document as the gateway serves it, for SDK generators and review.
process.stdout.write(`${JSON.stringify(gatewayOpenApiDocument(), null, 2)}\n`);
