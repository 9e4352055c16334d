import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from './access.decorators';
import type { ClientContext } from './client-context';
import { CurrentClient } from './current-client.decorator';
import { MeResponseDto } from './dto/me.response.dto';

@ApiTags('auth')
@Controller('v1')
export class AuthController {
  @Get('me')
  @Authenticated()
  @ApiOperation({
    operationId: 'getMe',
    summary: 'The calling client: how a caller checks that its key works and what it may do',
  })
  @ApiOkResponse({ type: MeResponseDto })
  me(@CurrentClient() client: ClientContext): MeResponseDto {
    return {
      id: client.id,
      name: client.name,
      scopes: client.scopes,
      binding: client.binding,
      anySubject: client.binding === null,
    };
  }
}
