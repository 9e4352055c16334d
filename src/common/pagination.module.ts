import { Module } from '@nestjs/common';
import { AuthConfig } from '../config/auth.config';
import { KeysetCursorCodec } from './keyset-cursor';

/**
 * Keyset pagination for feature modules: import it to inject KeysetCursorCodec (signed with
 * CURSOR_SECRET, resolved by loadAuthConfig). Not global: a module imports what it uses.
 */
@Module({
  providers: [
    {
      provide: KeysetCursorCodec,
      useFactory: (auth: AuthConfig) => new KeysetCursorCodec(auth.cursorSecret),
      inject: [AuthConfig],
    },
  ],
  exports: [KeysetCursorCodec],
})
export class PaginationModule {}
