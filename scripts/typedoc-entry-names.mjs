// TypeDoc plugin: in a package with several `exports` keys, TypeDoc names the `.` entry's module ""
// (an untitled page); this names it `index`, as its API report is named (packages/<pkg>/api/index.api.md).
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      if (module.name === '') module.name = 'index';
    }
  });
}
