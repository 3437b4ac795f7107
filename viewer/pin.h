/* featherbone-view: sanitizer builds keep loaded libraries mapped until exit (pin.c). */
#ifndef FB_VIEW_PIN_H
#define FB_VIEW_PIN_H

/* Marks every shared library loaded so far RTLD_NODELETE. */
void pin_loaded_libraries(void);

#endif /* FB_VIEW_PIN_H */
