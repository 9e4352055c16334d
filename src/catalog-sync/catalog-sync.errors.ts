import { AppError } from '../common/app-error';

/** A pass for this scope is already running (here or on another replica). */
export class SyncPassRunningError extends AppError {
  constructor(readonly runningPassId: string | null) {
    super('CONFLICT', 'A sync pass for this scope is already running', { passId: runningPassId });
  }
}

export class SyncPassNotFoundError extends AppError {
  constructor() {
    super('NOT_FOUND', 'Sync pass not found');
  }
}

/** The pass was cancelled (service shutdown). */
export class PassCancelledError extends Error {
  constructor() {
    super('cancelled: the service is shutting down');
    this.name = 'PassCancelledError';
  }
}
