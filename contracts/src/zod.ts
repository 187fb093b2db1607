import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Every schema imports z from here so that `.openapi()` metadata is available everywhere
// and the OpenAPI document can be generated from the same schemas that validate requests.
extendZodWithOpenApi(z);

export { z };
