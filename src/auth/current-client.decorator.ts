import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../common/app-error';
import type { ClientContext } from './client-context';

/**
 * The authenticated client of this request (`@CurrentClient() client: ClientContext`). Only on
 * routes declared `@Authenticated()` or `@RequireScope(...)`; on a public route it is a bug (500).
 */
export const CurrentClient = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ClientContext => {
    const client = context.switchToHttp().getRequest<FastifyRequest>().clientContext;
    if (!client) throw new AppError('INTERNAL', 'No authenticated client on this route');
    return client;
  },
);
