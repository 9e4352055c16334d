import { Module } from '@nestjs/common';
import { AuthConfig } from '../config/auth.config';
import { CURSOR_SECRET, KeysetCursorCodec } from './keyset-cursor';

/**
 * Keyset pagination for feature modules: import it to inject KeysetCursorCodec (signed with
 * CURSOR_SECRET, resolved by loadAuthConfig). Not global: a module imports what it uses.
 */
@Module({
  providers: [
    { provide: CURSOR_SECRET, useFactory: (auth: AuthConfig) => auth.cursorSecret, inject: [AuthConfig] },
    KeysetCursorCodec,
  ],
  exports: [KeysetCursorCodec],
})
export class PaginationModule {}
